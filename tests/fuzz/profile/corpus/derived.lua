-- inheritance: the shipped OnePlus 12 with slower flash
return { base = "oneplus12", read_gbps = 4.2 }
