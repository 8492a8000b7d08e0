-- a base name may not leave the profile directory
return {
  read_gbps = 4.2,
  base = "../devices/oneplus12",
}
