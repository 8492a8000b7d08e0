return {
  read_gbps = 5.0,
}
