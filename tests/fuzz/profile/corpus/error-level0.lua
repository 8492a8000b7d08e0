error("multi\nline", 0)
