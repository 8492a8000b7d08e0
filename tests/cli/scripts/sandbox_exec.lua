os.execute("touch /tmp/flashspec-sandbox-escape")
