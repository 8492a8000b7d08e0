-- derives from phone; prefetch_layers on line 5 is out of range
return {
  base = "phone",
  prefetch_layers = 9,
}
