local fs = flashspec
print(pcall(fs.trace, "traces/data/does-not-exist.h5"))
print(pcall(fs.trace, "traces/data/README.md"))
print(pcall(fs.device, "../../etc/passwd"))
print(pcall(fs.model, ""))
fs.trace "configs/devices/oneplus12.lua"
