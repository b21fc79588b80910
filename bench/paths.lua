-- wrk script for bench/scenarios.py: with a file argument each request takes the next path of the file
-- (each thread starts at its own offset); always counts responses per status and prints
-- "STATUS {json}" at the end.
local threads = {}
local paths = nil
local index = 0
counts = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("id", #threads)
end

function init(args)
  if args[1] then
    paths = {}
    for line in io.lines(args[1]) do
      if #line > 0 then table.insert(paths, line) end
    end
    index = (id or 1) * 7919 % #paths
  end
end

function request()
  if paths then
    index = index % #paths + 1
    return wrk.format("GET", paths[index])
  end
  return wrk.format("GET")
end

function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    local thread_counts = thread:get("counts")
    for status, count in pairs(thread_counts) do
      total[tostring(status)] = (total[tostring(status)] or 0) + count
    end
  end
  local parts = {}
  for status, count in pairs(total) do table.insert(parts, string.format('"%s": %d', status, count)) end
  io.write("STATUS {" .. table.concat(parts, ", ") .. "}\n")
end
