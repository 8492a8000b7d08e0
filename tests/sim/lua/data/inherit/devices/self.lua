return {
  base = "self",
}
