return setmetatable({build=function() end},{__index=function(t,k) if k=="params" then return nil end error("no hook "..k) end})
