;;; snippet_client.el --- start a chat snippet's client (Eglot or lsp-mode) in a batch scenario  -*- lexical-binding: t; -*-

;; Loads common.el.  The scenarios that run an Emacs snippet with either client (the :client
;; parameter) share how it is loaded (`qa-load-snippet') and started (`qa-start').

(load (expand-file-name "common.el" (file-name-directory load-file-name)) nil t)

(qa-report-buffers "EGLOT\\|lsp-log\\|qodeassist\\|stderr\\|events\\|io")

(defun qa-load-snippet ()
  "Load the :client (Eglot or lsp-mode, set up for a batch run) and the :snippet."
  (qa-step "load the snippet")
  (if (equal (qa-param :client) "eglot")
      (progn (require 'eglot)
             (setq eglot-sync-connect 30 eglot-autoshutdown nil eglot-confirm-server-edits nil))
    (setq lsp-client-packages nil lsp-keep-workspace-alive nil lsp-enable-file-watchers nil
          lsp-headerline-breadcrumb-enable nil lsp-modeline-code-actions-enable nil
          lsp-modeline-diagnostics-enable nil lsp-restart 'ignore lsp-use-plists nil)
    (require 'lsp-mode))
  (load (qa-param :snippet) nil t))

(defun qa-start (buffer)
  "Start the snippet's client in BUFFER; return the function that sends a chat message."
  (with-current-buffer buffer
    (if (equal (qa-param :client) "eglot")
        (progn
          (apply #'eglot (eglot--guess-contact))
          (qa-wait #'eglot-current-server 30 "Eglot to connect")
          #'qodeassist-eglot-chat)
      (lsp-workspace-folders-add (qa-param :project))
      (lsp)
      (qa-wait (lambda ()
                 (cl-find-if (lambda (w) (eq (lsp--workspace-status w) 'initialized))
                             (lsp-workspaces)))
               30 "the qodeassist workspace to initialize")
      #'qodeassist-lsp-chat)))

;;; snippet_client.el ends here
