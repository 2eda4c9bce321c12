-- loom sweep on Slurm (issue 12), against the single-node Slurm of scripts/slurm-local.sh: a 6-job
-- array's merged results equal a local run's bit for bit; a detached array merges later; sbatch's
-- refusal is shown. Needs root or passwordless sudo (it starts munged, slurmctld and slurmd):
-- `make test-slurm`, which .ci/run runs.
package.path = "tests/lua/support/?.lua;" .. package.path
local U = require "util"
local plot = require "loom.plot"

local SCENE = "tests/data/sweep/sag.lua"
local started = false
local env = ""

local function rows(dir)
  local _, r = plot.read_csv(dir .. "/results.csv")
  return r
end

local function same(a, b)
  local ra, rb = rows(a), rows(b)
  assert.equal(#ra, #rb)
  for i = 1, #ra do
    for _, k in ipairs {"job", "stretch", "seed", "sag", "energy", "hash", "status"} do
      assert.equal(ra[i][k], rb[i][k], ("row %d, %s"):format(i, k))
    end
  end
end

describe("loom sweep on Slurm", function()
  it("starts a single-node Slurm", function()
    local _, running = U.sh("scripts/slurm-local.sh status")
    local text, code = U.sh("scripts/slurm-local.sh start")
    assert.equal(0, code, text)
    started = running ~= 0
    env = "SLURM_CONF=" .. text:match("export SLURM_CONF=(%S+)") .. " "
  end)

  it("gives a 6-job array's results equal to a local run's, bit for bit", function()
    local a, b = U.tmpdir(), U.tmpdir()
    local args = ("sweep %q --param stretch=300,600,900 --seeds 1..2 --time 0.05"):format(SCENE)
    local t1, c1 = U.loom_run(args .. (" --jobs 2 --out %q"):format(a))
    assert.equal(0, c1, t1)
    local t2, c2 = U.sh(env .. ("%q %s --on slurm --max-running 2 --time-limit 00:05:00 --out %q"):format(U.loom, args, b))
    assert.equal(0, c2, t2)
    assert.matches("6 jobs: 6 ok, 0 failed", t2)
    same(a, b)
  end)

  it("returns at once with --detach and merges later with --merge", function()
    local a, b = U.tmpdir(), U.tmpdir()
    local args = ("sweep %q --param stretch=400 --seeds 1..2 --time 0.05"):format(SCENE)
    U.loom_run(args .. (" --out %q"):format(a))
    local text, code = U.sh(env .. ("%q %s --on slurm --detach --out %q"):format(U.loom, args, b))
    assert.equal(0, code, text)
    local id = text:match("submitted Slurm array (%d+)")
    assert.not_nil(id, text)
    for _ = 1, 120 do
      local q = U.sh(env .. "squeue -h -j " .. id)
      if q:match("^%s*$") then break end
      U.sleep(0.5)
    end
    text, code = U.sh(("%q sweep --merge %q"):format(U.loom, b))
    assert.equal(0, code, text)
    same(a, b)
  end)

  it("shows sbatch's message when it refuses the script", function()
    local out = U.tmpdir()
    local text, code = U.sh(env .. ("%q sweep %q --param stretch=400 --seeds 1 --on slurm --partition no_such_partition --out %q")
      :format(U.loom, SCENE, out))
    assert.equal(2, code, text)
    assert.matches("sbatch refused", text)
    assert.matches("partition", text)
  end)

  it("stops only what it started", function()
    if not started then return end
    local text, code = U.sh("scripts/slurm-local.sh stop")
    assert.equal(0, code, text)
    assert.matches("stopped: slurmd slurmctld munged", text)
    local _, st = U.sh("scripts/slurm-local.sh status")
    assert.equal(1, st)
  end)
end)
