-- Headless Neovim 0.11: open a buggy kernel, wait for PLS001, apply the preferred quick fix,
-- write the file, quit. The server command comes from $PALLAS_LSP_CMD (a JSON list).
-- The configuration is the one the README documents (vim.lsp.config + vim.lsp.enable).
vim.g.loaded_python3_provider = 0 -- else ftplugin/python.vim probes for pynvim (+1.7 s)
local function out(s) io.stdout:write(s .. "\n") end
local function fail(msg) out("FAIL: " .. msg); vim.cmd("cquit 1") end

vim.lsp.config("pallas", {
  cmd = vim.json.decode(os.getenv("PALLAS_LSP_CMD")),
  filetypes = { "python" },
  root_markers = { "pyproject.toml", ".git" },
})
vim.lsp.enable("pallas")

local function main()
  local buf = vim.api.nvim_get_current_buf()
  local function ours()
    return vim.tbl_filter(function(d) return d.code == "PLS001" end, vim.diagnostic.get(buf))
  end
  if not vim.wait(60000, function() return #ours() > 0 end, 50) then return fail("no PLS001 diagnostic") end
  local d = ours()[1]
  out(("diagnostic: %s %d:%d %s"):format(d.code, d.lnum + 1, d.col, d.message))
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
  vim.lsp.buf.code_action({ apply = true, filter = function(a) return a.isPreferred end })
  if not vim.wait(10000, function()
        for _, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
          if line:find("jnp.float32, collective=True)", 1, true) and line:find("acc_tmem", 1, true) then return true end
        end
        return false
      end, 50) then return fail("quick fix not applied") end
  vim.cmd("silent write")
  if not vim.wait(30000, function() return #ours() == 0 end, 50) then return fail("PLS001 still reported") end
  out("fixed and written")
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = buf })) do client:stop() end
  vim.wait(5000, function() return #vim.lsp.get_clients() == 0 end, 20)
  vim.cmd("qall!")
end

vim.api.nvim_create_autocmd("VimEnter", { callback = function()
  local ok, err = xpcall(main, debug.traceback); if not ok then fail(err) end
end })
