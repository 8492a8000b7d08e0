return {
  read_gbps = 4.2,
  base = 12,
}
