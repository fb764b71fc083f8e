-- wrk script of the benchmark's accept phase: a new message (new subject) per request, Basic auth,
-- and one JSON line with the figures at the end. BENCH_FLOOR=1: a plain GET instead (the HTTP floor).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = os.getenv("BENCH_AUTH")
local run = os.getenv("BENCH_RUN") or "WRK"
local counter = 0
local thread_id = 0
setup = function(thread)
  thread_id = thread_id + 1
  thread:set("tid", thread_id)
end
local floor = os.getenv("BENCH_FLOOR") == "1"
request = function()
  if floor then
    return wrk.format("GET", nil, {}, nil)
  end
  counter = counter + 1
  local body = '{"srvyDrawupNo":"' .. run .. '-' .. tostring(tid) .. '-' .. counter .. '","patno":"P-1","formCd":"F100","srvyNo":"S-ACC"}'
  return wrk.format(nil, nil, nil, body)
end
done = function(summary, latency, requests)
  io.write(string.format('BENCH {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"p999_us":%d,"non2xx":%d,"errors":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency:percentile(99.9),
    summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
