-- --video (issue 12): frames piped to ffmpeg at the scene's rate; a clear message without ffmpeg
-- or in the window.
package.path = "tests/lua/support/?.lua;" .. package.path
local U = require "util"

describe("--video", function()
  it("writes an MP4 of the frames at the scene's frame rate when ffmpeg is there, else says what to install", function()
    local dir = U.tmpdir()
    local out = dir .. "/v.mp4"
    local have = U.sh("command -v ffmpeg") ~= ""
    local text, code = U.loom_run(("run scenes/hello_cloth.lua --headless --time 1 --size 160x120 --video %q"):format(out))
    if have then
      assert.equal(0, code, text)
      local probe = U.sh(("ffprobe -v error -count_frames -select_streams v:0 -show_entries " ..
        "stream=nb_read_frames,r_frame_rate,width,height -of csv=p=0 %q"):format(out))
      -- 160 x 120, 30 frames a second (a frame every 8 steps of 1/240 s), frame 0 and one per 1/30 s
      assert.equal("160,120,30/1,31", probe:match("[^\n]+"))
    else
      assert.equal(2, code, text)
      assert.matches("--video needs ffmpeg, which is not installed", text)
    end
    -- a PATH without ffmpeg: the message, and nothing runs
    local t2, c2 = U.sh(("PATH=/nonexistent %q run scenes/hello_cloth.lua --headless --time 0.1 --video %q"):format(U.loom, dir .. "/w.mp4"))
    assert.equal(2, c2, t2)
    assert.matches("make deps%-video", t2)
  end)
end)
