-- derives from the shipped OnePlus 12 profile; one value changed
return {
  base = "oneplus12",
  read_gbps = 3.5,
}
