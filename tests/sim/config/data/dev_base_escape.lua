-- the base (inherit/devices/escape.lua) tries to open a file
return {
  base = "escape",
}
