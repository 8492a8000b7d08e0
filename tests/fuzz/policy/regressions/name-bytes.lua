return { build = function() end, name = "a b\1\255" }
