return { base = "cyc_b", read_gbps = 1 }
