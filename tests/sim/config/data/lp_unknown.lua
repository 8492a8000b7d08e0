-- a comment that mentions levl = 3 must not be taken for the key
check {
  name = "x",
  levl = 3,
}
