;;; pallas-eglot.el --- pallas-lsp in Emacs with eglot (built in from Emacs 29; Debian's elpa-eglot on 28)
;; Needs `pallas-lsp' on exec-path (pip install pallas-lsp). eglot runs one server per major mode,
;; so this replaces another Python server (pylsp, pyright) in Python buffers.
(require 'eglot)
(add-to-list 'eglot-server-programs '((python-mode python-ts-mode) . ("pallas-lsp")))
(add-hook 'python-mode-hook #'eglot-ensure)
;; Optional, per project in .dir-locals.el: ((python-mode . ((eglot-workspace-configuration
;;   . (:pallas (:select ["PLS001"] :lint (:run "onSave")))))))
