;;; lsp_common.el --- lsp-mode helpers for the batch Emacs scenarios  -*- lexical-binding: t; -*-

;; Loads common.el; `qa-lsp-load' loads lsp-mode (Debian's elpa-lsp-mode) with only our
;; client, `qa-lsp-start' starts it in a buffer, and a failure report gets lsp-mode's logs.

(load (expand-file-name "common.el" (file-name-directory load-file-name)) nil t)

(qa-report-buffers "lsp-log\\|qodeassist\\|stderr\\|lsp-io")

(defun qa-lsp-start (buffer)
  "Start lsp-mode in BUFFER and wait until the qodeassist workspace is initialized."
  (with-current-buffer buffer
    (lsp)
    (qa-wait (lambda ()
               (cl-find-if (lambda (w) (and (eq (lsp--workspace-status w) 'initialized)
                                            (eq (lsp--client-server-id (lsp--workspace-client w))
                                                'qodeassist)))
                           (lsp-workspaces)))
             30 "the qodeassist workspace to initialize")))

(defun qa-lsp-load ()
  "Load lsp-mode with only the qodeassist client in mind, logging the traffic."
  (setq lsp-client-packages nil          ; only our client, not lsp-mode's 150 others
        lsp-session-file (expand-file-name "lsp-session" (qa-param :project))
        lsp-keep-workspace-alive nil
        lsp-enable-file-watchers nil
        lsp-headerline-breadcrumb-enable nil
        lsp-modeline-code-actions-enable nil
        lsp-modeline-diagnostics-enable nil
        lsp-enable-snippet nil
        lsp-restart 'ignore
        lsp-log-io t)
  (require 'lsp-mode))

;;; lsp_common.el ends here
