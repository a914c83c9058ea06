;;; edit_broken_scenario.el --- an edit that breaks the file, in an Emacs snippet  -*- lexical-binding: t; -*-

;; Issue 47.  Loads the snippet named by the parameters (Eglot or lsp-mode) and chats with an
;; agent whose `edit_file' call would leave add.py unparsable.  The permission question is
;; answered with `completing-read' (scripted "Allow once"; what it was asked, with its initial
;; input, is recorded).  The edit block shows the warning; `a' asks again with `yes-or-no-p'
;; (scripted: the :answer parameter), and only "yes" applies the edit.

(load (expand-file-name "snippet_client.el" (file-name-directory load-file-name)) nil t)

(defvar qa-asked nil "What `completing-read' was asked, last first: ((PROMPT INITIAL . CHOICES)...).")
(defvar qa-confirmed nil "The prompts `yes-or-no-p' got, last first.")

(qa-run
 (lambda ()
   (qa-load-snippet)

   (qa-step "chat with an agent whose edit breaks the file")
   (let* ((before "def add(a, b):\n    return \n")
          (buffer (qa-visit "add.py" before))
          (chat (qa-start buffer))
          (completing-read-function
           (lambda (prompt collection _predicate _require initial &rest _)
             (push (cons prompt (cons (or initial "") (all-completions "" collection))) qa-asked)
             "Allow once")))
     (with-current-buffer buffer
       (funcall chat "Change add")
       (qa-wait (lambda () (string-match-p "\\[\\(finished\\|failed\\)" (qa-chat-text)))
                30 "the chat answer to finish")
       (qa-record :questions (vconcat (mapcar #'vconcat (reverse qa-asked))))
       (qa-wait (lambda () (string-match-p "📝 Edit add.py: pending" (qa-chat-text)))
                10 "the proposed edit")
       (qa-record :proposed (qa-chat-text))

       (qa-step "a: asked again; the answer decides")
       (cl-letf (((symbol-function 'yes-or-no-p)
                  (lambda (prompt)
                    (push prompt qa-confirmed)
                    (equal (qa-param :answer) "yes"))))
         (with-current-buffer qodeassist-chat-buffer-name
           (goto-char (point-min))
           (search-forward "⚠")
           (call-interactively (key-binding (kbd "a")))))
       (qa-record :confirmed (vconcat (reverse qa-confirmed)))
       (if (equal (qa-param :answer) "yes")
           (progn
             (qa-wait (lambda () (string-match-p "📝 Edit add.py: applied" (qa-chat-text)))
                      15 "the edit block to say applied")
             (qa-wait (lambda () (not (equal (with-current-buffer "add.py" (buffer-string))
                                             before)))
                      15 "the applied edit to reach the buffer"))
         ;; Nothing was sent: the block stays pending, the buffer as it was.
         (qa-check (string-match-p "📝 Edit add.py: pending" (qa-chat-text))
                   "the edit to stay pending"))
       (qa-record :final (qa-chat-text))
       (qa-record :buffer (with-current-buffer "add.py" (buffer-string)))))

   (qa-step "shut down")
   (if (equal (qa-param :client) "eglot")
       (with-current-buffer "add.py"
         (qa-eglot-shutdown (eglot-current-server)))
     (let* ((workspace (with-current-buffer "add.py" (car (lsp-workspaces))))
            (process (lsp--workspace-proc workspace)))
       (lsp-workspace-shutdown workspace)
       (qa-wait (lambda () (not (process-live-p process))) 15 "the server to exit")))))

;;; edit_broken_scenario.el ends here
