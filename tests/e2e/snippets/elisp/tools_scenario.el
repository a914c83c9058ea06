;;; tools_scenario.el --- the chat's tools through an Emacs snippet  -*- lexical-binding: t; -*-

;; Loads the snippet named by the parameters (Eglot or lsp-mode), chats with an agent that
;; calls the `terminal' tool: the server asks permission with window/showMessageRequest, which
;; the LSP client asks with `completing-read' (scripted to pick the :answer parameter).  Then a
;; fileEdit event is shown as a diff block whose keys (a / u) send qodeassist/chat/editFile
;; (here to a recording stand-in) and rewrite its header, as does a later event of the edit.

(load (expand-file-name "common.el" (file-name-directory load-file-name)) nil t)

(defvar qa-asked nil "What `completing-read' was asked: (PROMPT CHOICES).")

(defun qa-tools-diagnostics ()
  "The client's logs and the chat buffer, for a failure report."
  (mapconcat
   (lambda (buffer)
     (with-current-buffer buffer
       (format "==== %s\n%s\n" (buffer-name)
               (let ((text (buffer-string)))
                 (substring text (max 0 (- (length text) 6000)))))))
   (cl-remove-if-not
    (lambda (b) (string-match-p "EGLOT\\|lsp-log\\|qodeassist\\|stderr\\|events\\|io"
                                (buffer-name b)))
    (buffer-list))
   ""))

(setq qa-diagnostics-function #'qa-tools-diagnostics)

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

(defun qa-chat-text ()
  "The chat buffer's text."
  (with-current-buffer qodeassist-chat-buffer-name
    (buffer-substring-no-properties (point-min) (point-max))))

(defun qa-feed (event)
  "Hand EVENT (a plist) to the client's chat event handler, as the server would."
  (if (equal (qa-param :client) "eglot")
      (apply #'eglot-handle-notification (eglot-current-server) 'qodeassist/chat/event event)
    ;; lsp-mode hands handlers the parsed JSON: hash tables (`lsp-use-plists' is off).
    (qodeassist-lsp--on-chat-event nil (json-parse-string (json-encode event)))))

(qa-run
 (lambda ()
   (qa-step "load the snippet")
   (if (equal (qa-param :client) "eglot")
       (progn (require 'eglot)
              (setq eglot-sync-connect 30 eglot-autoshutdown nil))
     (setq lsp-client-packages nil lsp-keep-workspace-alive nil lsp-enable-file-watchers nil
           lsp-headerline-breadcrumb-enable nil lsp-modeline-code-actions-enable nil
           lsp-modeline-diagnostics-enable nil lsp-restart 'ignore lsp-use-plists nil)
     (require 'lsp-mode))
   (load (qa-param :snippet) nil t)

   (qa-step "chat with an agent that calls the terminal tool")
   (let* ((buffer (qa-visit "add.py" "def add(a, b):\n    return \n"))
          (chat (qa-start buffer))
          (completing-read-function
           (lambda (prompt collection &rest _)
             (setq qa-asked (list prompt (all-completions "" collection)))
             (qa-param :answer))))
     (with-current-buffer buffer
       ;; The server adds the tool kit once its configuration is loaded and its other
       ;; features have finished `initialized'; a chat sent before that gets no tools (a
       ;; server race, reported).  Wait for the ready status, then a moment more.
       (qa-wait (lambda ()
                  (let ((status (if (equal (qa-param :client) "eglot")
                                    qodeassist-eglot-status
                                  qodeassist-lsp-status)))
                    (and status (equal (if (hash-table-p status) (gethash "state" status)
                                         (plist-get status :state))
                                       "ready"))))
                60 "the server to be ready")
       (sleep-for 1)
       (funcall chat "Run git --version")
       (qa-wait (lambda () (string-match-p "\\[\\(finished\\|failed\\)" (qa-chat-text)))
                30 "the chat answer to finish")
       (qa-record :asked (vconcat (list (car qa-asked)) (cadr qa-asked)))
       (qa-record :chatBuffer (qa-chat-text))

       (qa-step "a file edit: the diff block, its keys, a later status")
       (let ((chat-id (if (equal (qa-param :client) "eglot")
                          qodeassist-eglot--chat-id
                        qodeassist-lsp--chat-id))
             (sent nil))
         (qa-feed (list :chatId chat-id :requestId "r9" :kind "fileEdit" :editId "e1"
                        :uri (concat "file://" (expand-file-name "add.py" (qa-param :project)))
                        :diff "--- a/add.py\n+++ b/add.py\n@@ -2 +2 @@\n-    return \n+    return a + b\n"
                        :status "pending"))
         (qa-record :proposed (qa-chat-text))
         (let ((qodeassist-chat-edit-function
                (lambda (id action callback)
                  (push (list id action) sent)
                  (funcall callback (if (equal action "apply") "applied" "undone") ""))))
           (with-current-buffer qodeassist-chat-buffer-name
             (goto-char (point-max))
             (forward-line -2)               ; on the diff, inside the block
             ;; The command each key runs in the chat buffer (batch Emacs has no command loop).
             (call-interactively (key-binding (kbd "a")))
             (qa-record :applied (qa-chat-text))
             (call-interactively (key-binding (kbd "u")))))
         (qa-record :sent (vconcat (mapcar #'vconcat (reverse sent))))
         (qa-feed (list :chatId chat-id :requestId "r9" :kind "fileEdit" :editId "e1"
                        :uri (concat "file://" (expand-file-name "add.py" (qa-param :project)))
                        :diff "" :status "rejected"))
         (qa-record :final (qa-chat-text)))))

   (qa-step "shut down")
   (if (equal (qa-param :client) "eglot")
       (with-current-buffer "add.py"
         (let ((server (eglot-current-server)))
           (eglot-shutdown server)
           (qa-wait (lambda () (not (jsonrpc-running-p server))) 15 "the server to exit")))
     (let* ((workspace (with-current-buffer "add.py" (car (lsp-workspaces))))
            (process (lsp--workspace-proc workspace)))
       (lsp-workspace-shutdown workspace)
       (qa-wait (lambda () (not (process-live-p process))) 15 "the server to exit")))))

;;; tools_scenario.el ends here
