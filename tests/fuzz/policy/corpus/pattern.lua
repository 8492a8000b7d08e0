return { name = "pat", build = function() string.find(string.rep("a", 3000), "(.-)(.-)(.-)(.-)(.-)b") end }
