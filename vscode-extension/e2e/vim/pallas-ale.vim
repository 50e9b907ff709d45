" pallas-ale.vim: pallas-lsp in Vim with ALE (Debian: vim-ale). Needs `pallas-lsp` on PATH.
" Put it in your vimrc (after `packadd! ale` when ALE is an optional package) and add 'pallas'
" to the Python linters you use, e.g. let g:ale_linters = {'python': ['flake8', 'pallas']}
function! PallasProjectRoot(buffer) abort
  let l:root = ale#python#FindProjectRoot(a:buffer)
  return empty(l:root) ? fnamemodify(bufname(a:buffer), ':p:h') : l:root
endfunction
call ale#linter#Define('python', {
\   'name': 'pallas',
\   'lsp': 'stdio',
\   'executable': 'pallas-lsp',
\   'command': '%e',
\   'project_root': function('PallasProjectRoot'),
\})
" Quick fixes: :ALECodeAction on the squiggle (ALE 3.2+).
