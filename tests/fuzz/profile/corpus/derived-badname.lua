return { base = "../../etc/passwd" }
