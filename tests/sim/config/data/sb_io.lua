local f = io.open("/etc/passwd")
return { read_gbps = 5.0 }
