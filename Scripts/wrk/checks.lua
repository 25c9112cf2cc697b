-- wrk -s Scripts/wrk/checks.lua: GET /v1/accounts/subscriber-N/entitlements/pro for random N of 1,000,000 accounts
math.randomseed(os.time())
local key = os.getenv("KEY")
request = function()
  local n = math.random(0, 999999)
  return wrk.format("GET", "/v1/accounts/subscriber-" .. n .. "/entitlements/pro", { ["Authorization"] = "Bearer " .. key })
end
