-- each call is on a known line; the driver checks the line in every message
check { ratio = "x" }
check {
  level = 9,
}
check {
  name = "ok",

  level = 2.5,
}
check { mode = "fast" }
check { zzzzzzzzzz = 1 }
check { ratio = 0.5 }
check {
  level = 3, shapes = { 1, 2, 0 },
}
check { flag = 1 }
check { level = 1 }
