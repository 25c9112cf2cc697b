-- wrk -s Scripts/wrk/checks-and-consumes.lua: nine checks (GET …/entitlements/pro) for one consume (POST …/consumables/coins.small/consume,
-- a new idempotency key each) over random accounts of $ACCOUNTS (default 1,000,000:
-- the 10^7 story); env KEY
local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("id", counter)
end
function init(args)
  math.randomseed(os.time() * 1000 + id)
  key = os.getenv("KEY")
  accounts = tonumber(os.getenv("ACCOUNTS") or "1000000")
  n = 0
end
request = function()
  n = n + 1
  local a = math.random(0, accounts - 1)
  if n % 10 == 0 then
    local body = '{"quantity":1,"idempotencyKey":"wrk-' .. id .. '-' .. os.time() .. '-' .. n .. '-' .. math.random(1, 1000000000) .. '"}'
    return wrk.format("POST", "/v1/accounts/subscriber-" .. a .. "/consumables/coins.small/consume",
      { ["Authorization"] = "Bearer " .. key, ["Content-Type"] = "application/json" }, body)
  end
  return wrk.format("GET", "/v1/accounts/subscriber-" .. a .. "/entitlements/pro", { ["Authorization"] = "Bearer " .. key })
end
