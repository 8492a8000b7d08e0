local f = io.open("/etc/passwd")
return { base = "phone" }
