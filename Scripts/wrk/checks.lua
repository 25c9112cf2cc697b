-- wrk -s Scripts/wrk/checks.lua: GET /v1/accounts/subscriber-N/entitlements/pro for random N of $ACCOUNTS accounts (default 1,000,000: the 10^7 story); env KEY
math.randomseed(os.time())
local key = os.getenv("KEY")
accounts = tonumber(os.getenv("ACCOUNTS") or "1000000")
request = function()
  local n = math.random(0, accounts - 1)
  return wrk.format("GET", "/v1/accounts/subscriber-" .. n .. "/entitlements/pro", { ["Authorization"] = "Bearer " .. key })
end
