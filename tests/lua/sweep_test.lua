-- loom sweep (issue 12): jobs from parameter lists and seeds, merged results, resuming, failures,
-- the back ends (a local pool, GNU parallel, a Slurm array script) giving the same results, plots,
-- loom.random, and what bad input gets.
package.path = "tests/lua/support/?.lua;" .. package.path
local loom = require "loom"
local U = require "util"
local plot = require "loom.plot"

local SCENE = "tests/data/sweep/sag.lua"

local function results(dir)
  local header, rows = plot.read_csv(dir .. "/results.csv")
  local by = {}
  for _, r in ipairs(rows) do by[r.stretch .. "/" .. r.seed] = r end
  return header, rows, by
end

describe("loom sweep", function()
  it("runs the product of parameter lists and seeds, one folder per job and a merged table", function()
    local out = U.tmpdir()
    local text, code = U.loom_run(("sweep %q --param stretch=300,600,900 --seeds 1..2 --time 0.1 --jobs 2 --out %q"):format(SCENE, out))
    assert.equal(0, code, text)
    assert.matches("6 jobs: 6 ok, 0 failed", text)
    local header, rows, by = results(out)
    assert.equal(6, #rows)
    assert.equal("job,stretch,seed,energy,sag,wall_s,steps,steps_per_s,hash,status,error", table.concat(header, ","))
    for _, r in ipairs(rows) do
      assert.equal("ok", r.status)
      assert.equal("12", r.steps)
      assert.is_true(tonumber(r.sag) > 0 and tonumber(r.steps_per_s) > 0)
      for _, f in ipairs {"job.txt", "result.txt", "stats.csv", "metrics.csv", "final.ckpt"} do
        assert.not_nil(U.read(out .. "/jobs/" .. r.job .. "/" .. f), r.job .. "/" .. f)
      end
    end
    -- each job's final state is what the scene gives in this process with the same parameters
    local sc = loom.load_scene("../data/sweep/sag.lua")
    local W = sc:instantiate { stretch = 600, seed = 2 }
    W:step(12)
    assert.equal(W:hash(), by["600/2"].hash)
    -- the seed matters (it jitters the mass), the parameter too
    assert.is_true(by["600/1"].hash ~= by["600/2"].hash)
    assert.is_true(by["300/1"].hash ~= by["900/1"].hash)
    -- results.jsonl: one object per job with numbers as numbers
    local first = U.read(out .. "/results.jsonl"):match("^[^\n]+")
    assert.matches('"stretch": 300, "seed": 1', first)
    -- the checkpoint loads back into the scene's world
    local W2 = loom.world_load(out .. "/jobs/" .. by["600/2"].job .. "/final.ckpt", sc)
    assert.equal(by["600/2"].hash, W2:hash())
  end)

  it("resumes: jobs already done are skipped, new ones run, a changed scene runs them all again", function()
    local out = U.tmpdir()
    local scene = out .. "/sag.lua"
    U.write(scene, U.read(SCENE))
    local text, code = U.loom_run(("sweep %q --param stretch=300,600 --seeds 1..2 --time 0.05 --out %q"):format(scene, out .. "/r"))
    assert.equal(0, code, text)
    local _, rows1 = results(out .. "/r")
    text, code = U.loom_run(("sweep %q --param stretch=300,600 --seeds 1..3 --time 0.05 --out %q"):format(scene, out .. "/r"))
    assert.equal(0, code, text)
    assert.matches("6 jobs %(stretch x 3 seeds%), 2 to run, 4 already done", text)
    local _, rows2 = results(out .. "/r")
    assert.equal(6, #rows2)
    -- the four old results are the very same (wall times included: not run again)
    local old = {}
    for _, r in ipairs(rows1) do old[r.job] = r.wall_s end
    local kept = 0
    for _, r in ipairs(rows2) do if old[r.job] then assert.equal(old[r.job], r.wall_s) kept = kept + 1 end end
    assert.equal(4, kept)
    U.write(scene, U.read(SCENE) .. "\n-- edited\n")
    text = U.loom_run(("sweep %q --param stretch=300,600 --seeds 1..3 --time 0.05 --out %q"):format(scene, out .. "/r"))
    assert.matches("6 to run, 0 already done", text)
  end)

  it("takes its lists from the scene's sweep table when the command line gives none", function()
    local out = U.tmpdir()
    local text, code = U.loom_run(("sweep %q --out %q"):format(SCENE, out))
    assert.equal(0, code, text)
    local _, rows = results(out)
    assert.equal(4, #rows) -- stretch = {200, 800} x seeds 1..2
    assert.equal("30", rows[1].steps) -- time = 0.25 at dt = 1/120
  end)

  it("goes on when some jobs fail, and lists them with their message", function()
    local out = U.tmpdir()
    local text, code = U.loom_run(("sweep %q --param fail=false,true --seeds 1 --time 0.05 --out %q"):format(SCENE, out))
    assert.equal(1, code, text)
    assert.matches("2 jobs: 1 ok, 1 failed", text)
    assert.matches("asked to fail", text)
    local _, rows = plot.read_csv(out .. "/results.csv")
    assert.equal("ok", rows[1].status)
    assert.equal("error", rows[2].status)
    assert.matches("asked to fail %(fail = true%)", rows[2].error)
  end)

  it("gives the same results through GNU parallel as locally", function()
    assert.is_true(U.sh("command -v parallel") ~= "", "GNU parallel is not installed: make deps installs it")
    local a, b = U.tmpdir(), U.tmpdir()
    local args = ("sweep %q --param stretch=300,700 --seeds 1..2 --time 0.05 --jobs 2"):format(SCENE)
    local t1, c1 = U.loom_run(args .. (" --out %q"):format(a))
    local t2, c2 = U.loom_run(args .. (" --on parallel --out %q"):format(b))
    assert.equal(0, c1, t1)
    assert.equal(0, c2, t2)
    local _, ra = results(a)
    local _, rb = results(b)
    for i = 1, #ra do
      assert.equal(ra[i].job, rb[i].job)
      assert.equal(ra[i].hash, rb[i].hash)
      assert.equal(ra[i].sag, rb[i].sag)
    end
  end)

  it("writes a Slurm array script with the limits asked for (--dry-run)", function()
    local out = U.tmpdir()
    local text, code = U.loom_run(("sweep %q --param stretch=300,600,900 --seeds 1..2 --on slurm --dry-run --max-running 2 " ..
      "--time-limit 00:10:00 --mem 2G --partition loom --out %q"):format(SCENE, out))
    assert.equal(0, code, text)
    assert.matches("6 array tasks", text)
    local script = U.read(out .. "/sweep.sbatch")
    assert.matches("#SBATCH %-%-array=0%-5%%2\n", script)
    assert.matches("#SBATCH %-%-time=00:10:00\n", script)
    assert.matches("#SBATCH %-%-mem=2G\n", script)
    assert.matches("#SBATCH %-%-partition=loom\n", script)
    assert.matches("sweep %-%-run%-job", script)
    local pending = U.read(out .. "/pending.txt")
    local n = 0
    for _ in pending:gmatch("job%-%x+\n") do n = n + 1 end
    assert.equal(6, n)
    -- without Slurm on PATH the message says what to do
    local t2, c2 = U.sh(("PATH=/nonexistent %q sweep %q --param stretch=300 --on slurm --out %q"):format(U.loom, SCENE, out .. "/x"))
    assert.equal(2, c2)
    assert.matches("Slurm is not installed or not on PATH", t2)
    assert.matches("slurm%-local.sh start", t2)
  end)

  it("refuses bad input with a clear message", function()
    local out = U.tmpdir()
    local cases = {
      {"--param bogus=1,2", "does not declare a parameter 'bogus' (it declares: cells, fail, seed, stretch)"},
      {"--param stretch=", "--param stretch has no values (an empty range)"},
      {"--param stretch=soft", "--param stretch=soft: parameter 'stretch' must be a number"},
      {"--seeds 5..2", "--seeds 5..2 is an empty range"},
      {"--seeds 1,x", "--seeds: \"x\" is not an integer"},
      {"--on cloud", "--on must be local, parallel or slurm"},
      {"--jobs 0", "--jobs needs a whole number >= 1"},
      {"--frobnicate", "unknown option '--frobnicate'"},
    }
    for _, c in ipairs(cases) do
      local text, code = U.loom_run(("sweep %q %s --out %q"):format(SCENE, c[1], out))
      assert.equal(2, code, c[1] .. ": " .. text)
      assert.matches(c[2]:gsub("[%-%.%(%)%%%+%*%?%[%]%^%$]", "%%%0"), text)
    end
    local text, code = U.loom_run("sweep no_such_scene.lua --out " .. out)
    assert.equal(2, code)
    assert.matches("cannot find the scene 'no_such_scene.lua'", text)
    text, code = U.loom_run("sweep --merge " .. out .. "/nothing")
    assert.equal(2, code)
    assert.matches("is not a sweep folder", text)
  end)
end)

describe("loom plot", function()
  it("draws a column against another from a results table, one series per --by value", function()
    local out = U.tmpdir()
    U.loom_run(("sweep %q --param stretch=300,600 --seeds 1..2 --time 0.05 --out %q"):format(SCENE, out))
    local text, code = U.loom_run(("plot %q --x stretch --y sag --by seed --out %q"):format(out .. "/results.csv", out .. "/p.png"))
    assert.equal(0, code, text)
    local cv = loom.C.loom_canvas_read_png(out .. "/p.png")
    assert.is_true(cv ~= nil)
    assert.equal(800, loom.C.loom_canvas_width(cv))
    loom.C.loom_canvas_destroy(cv)
    text, code = U.loom_run(("plot %q --x stretch --y nothing"):format(out .. "/results.csv"))
    assert.equal(2, code)
    assert.matches("has no column 'nothing'", text)
  end)
end)

describe("loom.random", function()
  it("gives the same numbers for the same seed (SplitMix64) and different ones for another", function()
    local a, b, c = loom.random(42), loom.random(42), loom.random(43)
    -- SplitMix64's first output for seed 42, top 53 bits as a fraction
    assert.equal(0.7415648787718233, a:uniform())
    b:uniform()
    for _ = 1, 100 do
      local x = a:uniform()
      assert.equal(x, b:uniform())
      assert.is_true(x >= 0 and x < 1)
    end
    assert.is_true(c:uniform() ~= loom.random(42):uniform())
    local r = loom.random(7)
    for _ = 1, 200 do
      local k = r:int(1, 6)
      assert.is_true(k >= 1 and k <= 6 and k == math.floor(k))
    end
    local sum, sum2, n = 0, 0, 20000
    for _ = 1, n do local g = r:normal(2, 3) sum, sum2 = sum + g, sum2 + g * g end
    assert.near(2, sum / n, 0.1)
    assert.near(3, math.sqrt(sum2 / n - (sum / n) ^ 2), 0.1)
    assert.error(function() loom.random(1.5) end, "expected an integer seed")
  end)
end)
