return { name = "x", read_gbps = 5.0, unknown_key = 1 }
