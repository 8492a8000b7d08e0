-- a profile must not run commands
os.execute("touch /tmp/flashspec-sandbox-breach")
return { read_gbps = 5.0 }
