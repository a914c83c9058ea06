;;; diagnostics_scenario.el --- the chat's `diagnostics' tool through an Emacs snippet  -*- lexical-binding: t; -*-

;; Loads the snippet named by the parameters (Eglot or lsp-mode), gives add.py a diagnostic the
;; way each client gets one (Eglot: a Flymake backend; lsp-mode: a server's
;; textDocument/publishDiagnostics, through lsp-mode's own handler), and chats with an agent
;; that calls `diagnostics' for add.py and then for every file: the server asks the editor
;; with `qodeassist/diagnostics' and the model gets what the editor shows.

(load (expand-file-name "lsp_common.el" (file-name-directory load-file-name)) nil t)

(qa-report-buffers "EGLOT\\|lsp-log\\|qodeassist\\|stderr\\|io")

(defun qa-undefined-x (report-fn &rest _)
  "A Flymake backend: `x' on line 2 of the buffer is undefined."
  (save-excursion
    (goto-char (point-min))
    (search-forward "x")
    (funcall report-fn (list (flymake-make-diagnostic (current-buffer) (1- (point)) (point)
                                                      :error "undefined name 'x'")))))

(qa-run
 (lambda ()
   (qa-step "load the snippet")
   (let ((eglot-p (equal (qa-param :client) "eglot")))
     (if eglot-p
         (progn (require 'eglot) (setq eglot-sync-connect 30 eglot-autoshutdown nil))
       (qa-lsp-load))
     (load (qa-param :snippet) nil t)
     (qa-step "start the client on add.py and give it a diagnostic")
     (with-current-buffer (qa-visit "add.py" "def add(a, b):\n    return x\n")
       (if eglot-p
           (progn
             (apply #'eglot (eglot--guess-contact))
             (qa-wait #'eglot-current-server 30 "Eglot to connect")
             (add-hook 'flymake-diagnostic-functions #'qa-undefined-x nil t)
             (flymake-start nil t))
         (lsp-workspace-folders-add (qa-param :project))
         (qa-lsp-start (current-buffer))
         (lsp--on-diagnostics
          (lsp-find-workspace 'qodeassist (buffer-file-name))
          (lsp-make-publish-diagnostics-params
           :uri (lsp--path-to-uri (buffer-file-name))
           :diagnostics (vector (lsp-make-diagnostic
                                 :range (lsp-make-range
                                         :start (lsp-make-position :line 1 :character 11)
                                         :end (lsp-make-position :line 1 :character 12))
                                 :severity 1 :source "pyflakes"
                                 :message "undefined name 'x'")))))
       (qa-wait (lambda () (if eglot-p
                               (flymake-diagnostics)
                             (gethash (lsp--fix-path-casing buffer-file-name) (lsp-diagnostics))))
                10 "the client to hold the diagnostic")
       (qa-step "chat with an agent that calls the diagnostics tool")
       (funcall (if eglot-p #'qodeassist-eglot-chat #'qodeassist-lsp-chat) "What is wrong?")
       (qa-wait (lambda () (string-match-p "\\[\\(finished\\|failed\\)" (qa-chat-text)))
                30 "the chat answer to finish")
       (qa-record :chat (qa-chat-text))
       (qa-step "shut down")
       (if eglot-p
           (qa-eglot-shutdown (eglot-current-server))
         (let* ((workspace (lsp-find-workspace 'qodeassist (buffer-file-name)))
                (process (lsp--workspace-proc workspace)))
           (lsp-workspace-shutdown workspace)
           (qa-wait (lambda () (not (process-live-p process))) 15 "the server to exit")))))))

;;; diagnostics_scenario.el ends here
