-- derived profile with a misspelt key on line 4
return {
  base = "oneplus12",
  read_gbp = 4.2,
}
