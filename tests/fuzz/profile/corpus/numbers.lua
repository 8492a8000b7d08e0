return { ["layers"] = 1e308, hidden = -0.0, heads = 0/0 }
