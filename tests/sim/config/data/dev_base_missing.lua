-- the base does not exist
return {
  base = "no-such-phone",
  read_gbps = 4.2,
}
