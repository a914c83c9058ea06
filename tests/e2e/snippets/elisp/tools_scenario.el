;;; tools_scenario.el --- the chat's tools through an Emacs snippet  -*- lexical-binding: t; -*-

;; Loads the snippet named by the parameters (Eglot or lsp-mode) and chats with an agent that
;; calls `terminal' and then `edit_file': the server asks permission for each with
;; window/showMessageRequest, which the LSP client asks with `completing-read' (scripted: the
;; :answer parameter for the terminal, "Allow once" for the edit).  The proposed edit is a
;; diff block in the chat buffer; its keys (a, then u) send qodeassist/chat/editFile, the
;; server changes add.py's buffer through workspace/applyEdit, and the block's header follows.

(load (expand-file-name "snippet_client.el" (file-name-directory load-file-name)) nil t)

(defvar qa-asked nil "What `completing-read' was asked, last first: ((PROMPT . CHOICES)...).")

(qa-run
 (lambda ()
   (qa-load-snippet)

   (qa-step "chat with an agent that calls the terminal tool")
   (let* ((buffer (qa-visit "add.py" "def add(a, b):\n    return \n"))
          (chat (qa-start buffer))
          (answers (list (qa-param :answer) "Allow once"))
          (completing-read-function
           (lambda (prompt collection &rest _)
             (push (cons prompt (all-completions "" collection)) qa-asked)
             (pop answers))))
     (with-current-buffer buffer
       (funcall chat "Run git --version")
       (qa-wait (lambda () (string-match-p "\\[\\(finished\\|failed\\)" (qa-chat-text)))
                30 "the chat answer to finish")
       (qa-record :questions (vconcat (mapcar #'vconcat (reverse qa-asked))))
       (qa-record :chatBuffer (qa-chat-text))

       (qa-step "a file edit: the diff block, its keys, the edit in the buffer")
       (let ((chat-id (if (equal (qa-param :client) "eglot")
                          qodeassist-eglot--chat-id
                        qodeassist-lsp--chat-id)))
         (qa-wait (lambda () (string-match-p "📝 Edit add.py: pending" (qa-chat-text)))
                  10 "the proposed edit")
         (qa-record :proposed (qa-chat-text))
         (with-current-buffer qodeassist-chat-buffer-name
           (goto-char (point-min))
           (search-forward "+    return a + b")  ; on the diff, inside the block
           ;; The command each key runs in the chat buffer (batch Emacs has no command loop).
           (call-interactively (key-binding (kbd "a"))))
         (qa-wait (lambda () (equal (with-current-buffer "add.py" (buffer-string))
                                    "def add(a, b):\n    return a + b\n"))
                  15 "the applied edit to reach the buffer (workspace/applyEdit)")
         (qa-wait (lambda () (string-match-p "📝 Edit add.py: applied — applied to add.py (u: undo)" (qa-chat-text)))
                  10 "the edit block to say applied")
         (qa-record :applied (qa-chat-text))
         (with-current-buffer qodeassist-chat-buffer-name
           (call-interactively (key-binding (kbd "u"))))
         (qa-wait (lambda () (equal (with-current-buffer "add.py" (buffer-string))
                                    "def add(a, b):\n    return \n"))
                  15 "the undo to restore the buffer")
         (qa-wait (lambda () (string-match-p "📝 Edit add.py: undone" (qa-chat-text)))
                  10 "the edit block to say undone")
         (qa-record :chatId chat-id)
         (qa-record :final (qa-chat-text))
         (with-current-buffer "add.py"
           (when (equal (qa-param :client) "eglot")
             ;; Eglot sends didChange from an idle timer, which batch Emacs never runs.
             (eglot--signal-textDocument/didChange))))))

   (qa-step "shut down")
   (if (equal (qa-param :client) "eglot")
       (with-current-buffer "add.py"
         (qa-eglot-shutdown (eglot-current-server)))
     (let* ((workspace (with-current-buffer "add.py" (car (lsp-workspaces))))
            (process (lsp--workspace-proc workspace)))
       (lsp-workspace-shutdown workspace)
       (qa-wait (lambda () (not (process-live-p process))) 15 "the server to exit")))))

;;; tools_scenario.el ends here
