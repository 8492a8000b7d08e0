return { base = "cyc_a", read_gbps = 2 }
