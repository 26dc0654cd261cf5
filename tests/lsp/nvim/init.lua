-- Minimal Neovim config for the headless end-to-end test: start tilelsp for Python buffers (0.7+),
-- wait for its diagnostics, write them as JSON to $TILELSP_OUT, and quit.
local python = os.getenv("TILELSP_PYTHON") or "python3"
local out = os.getenv("TILELSP_OUT")

local function start(bufnr)
  local config = {
    name = "tilelsp",
    cmd = { python, "-m", "tilelsp", "serve" },
    root_dir = vim.fn.getcwd(),
    settings = { tilelsp = { targets = { "sm_90a" }, lowerOnSave = false } },
  }
  if vim.lsp.start then
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  local id = vim.lsp.start_client(config) -- Neovim 0.7
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

vim.api.nvim_create_autocmd("FileType", {
  pattern = "python",
  callback = function(args) start(args.buf) end,
})

vim.api.nvim_create_autocmd("VimEnter", {
  callback = function()
    local bufnr = vim.api.nvim_get_current_buf()
    local ok = vim.wait(60000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50)
    local items = {}
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      local lsp = (d.user_data or {}).lsp or {}
      table.insert(items, { lnum = d.lnum, col = d.col, end_col = d.end_col, message = d.message,
                            source = d.source, code = d.code or lsp.code, severity = d.severity })
    end
    local f = io.open(out, "w")
    f:write(vim.fn.json_encode({ ok = ok, diagnostics = items }))
    f:close()
    vim.cmd("qa!")
  end,
})
