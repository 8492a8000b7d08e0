local x = require("os")
return {}
