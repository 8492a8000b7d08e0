-- dev_cycle -> cyc_a -> cyc_b -> cyc_a (FLASHSPEC_CONFIG_DIR = inherit)
return {
  base = "cyc_a",
}
