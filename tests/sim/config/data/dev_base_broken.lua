-- the base (inherit/devices/broken.lua) has a value out of range
return {
  base = "broken",
}
