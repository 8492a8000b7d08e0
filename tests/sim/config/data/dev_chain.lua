-- two levels: dev_chain -> phone_fast -> phone (FLASHSPEC_CONFIG_DIR = inherit)
return {
  base = "phone_fast",
  npu_gflops = 2000,
}
