--@ steps=100000
while true do end
