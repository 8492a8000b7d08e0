local f = load(string.dump(function() return 1 end), "x", "b")
