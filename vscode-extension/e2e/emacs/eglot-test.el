;;; eglot-test.el --- batch test: pallas-lsp through eglot with the config in pallas-eglot.el
;; emacs --batch -l eglot-test.el FILE   (FILE: a copy of examples/collective_matmul.py; pallas-lsp on PATH)
;; Waits for PLS001 at 25:13, applies "Add collective=True to the TMEM allocation" through eglot,
;; saves. Exit 0 on success; the caller checks the file on disk.
(package-initialize)                                   ; Debian's elpa-eglot
(load (expand-file-name "pallas-eglot.el" (file-name-directory load-file-name)) nil t)
(defvar pallas-test-t0 (float-time))
(defun pallas-test-say (fmt &rest args)
  (princ (format "%6.0fms %s\n" (* 1000 (- (float-time) pallas-test-t0)) (apply #'format fmt args))))
(defun pallas-test-wait (pred secs)
  (let ((deadline (+ (float-time) secs)))
    (while (and (not (funcall pred)) (< (float-time) deadline)) (accept-process-output nil 0.05))
    (funcall pred)))
(defun pallas-test-pls001 ()
  (seq-filter (lambda (d) (string-match-p "\\[PLS001\\]" (flymake-diagnostic-text d))) (flymake-diagnostics)))

(condition-case err
    (let ((file (car command-line-args-left)))
      (setq command-line-args-left nil)
      (find-file file)
      (python-mode)
      (apply #'eglot (eglot--guess-contact))           ; M-x eglot, as eglot-ensure would
      (unless (pallas-test-wait #'eglot-current-server 20) (error "server did not start"))
      (pallas-test-say "connected: %s" (plist-get (eglot--server-info (eglot-current-server)) :name))
      (unless (pallas-test-wait #'pallas-test-pls001 30) (error "no PLS001 diagnostic"))
      (let* ((d (car (pallas-test-pls001)))
             (beg (flymake-diagnostic-beg d))
             (line (line-number-at-pos beg))
             (col (save-excursion (goto-char beg) (1+ (current-column)))))
        (pallas-test-say "diagnostic at %d:%d: %s" line col (flymake-diagnostic-text d))
        (unless (and (= line 25) (= col 13)) (error "PLS001 at %d:%d, expected 25:13" line col))
        ;; eglot-code-action-quickfix at the squiggle; pick the fix by title, as a user would in the menu
        (let* ((actions (eglot-code-actions beg (flymake-diagnostic-end d) "quickfix"))
               (titles (mapcar (lambda (a) (plist-get a :title)) actions))
               (fix (seq-find (lambda (a) (equal (plist-get a :title)
                                                 "pallas (PLS001): Add collective=True to the TMEM allocation"))
                              actions)))
          (pallas-test-say "quick fixes: %S" titles)
          (unless fix (error "no collective=True quick fix"))
          (eglot--read-execute-code-action (list fix) (eglot-current-server) "quickfix")))
      (save-buffer)
      (pallas-test-say "saved; PLS001 left: %d"
                       (progn (pallas-test-wait (lambda () (null (pallas-test-pls001))) 10) (length (pallas-test-pls001))))
      (when (pallas-test-pls001) (error "PLS001 still reported after the fix"))
      (eglot-shutdown (eglot-current-server))
      (kill-emacs 0))
  (error (pallas-test-say "FAIL: %S" err) (kill-emacs 1)))
