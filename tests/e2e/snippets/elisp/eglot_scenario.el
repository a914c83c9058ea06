;;; eglot_scenario.el --- editors/emacs/qodeassist-eglot.el in a real Emacs  -*- lexical-binding: t; -*-

;; Loads the snippet, lets Eglot start the server it names, and uses the editor the way a user
;; does: `completion-at-point' (candidate + exit function, as `completion-in-region' runs them),
;; the refactor code actions, the instruction command, the chat buffer and the status command.

(load (expand-file-name "common.el" (file-name-directory load-file-name)) nil t)

(defvar qa-server nil "The Eglot server of the scenario.")

(qa-report-buffers "EGLOT\\|qodeassist-chat")

(defun qa-eglot-completion ()
  "Ask for completion at point until the qodeassist candidate shows up; accept it.
Return (CANDIDATE . ITEM)."
  (let (capf candidate)
    (qa-wait
     (lambda ()
       (setq capf (eglot-completion-at-point))
       (let ((prefix (buffer-substring-no-properties (nth 0 capf) (point))))
         (setq candidate
               (cl-find-if (lambda (c)
                             (equal (plist-get (get-text-property 0 'eglot--lsp-item c) :detail)
                                    "qodeassist"))
                           (all-completions prefix (nth 2 capf)))))
       (or candidate (progn (accept-process-output nil 0.1) nil)))
     15 "a qodeassist candidate from completion-at-point")
    (let ((item (get-text-property 0 'eglot--lsp-item candidate))
          (exit (plist-get (nthcdr 3 capf) :exit-function)))
      ;; What `completion-in-region' does when the user picks the candidate.
      (delete-region (nth 0 capf) (nth 1 capf))
      (goto-char (nth 0 capf))
      (insert candidate)
      (funcall exit candidate 'finished)
      (cons (substring-no-properties candidate) item))))

(defun qa-completion-status ()
  "The completion part of the server's `qodeassist/status' (warm-ups, requests in flight)."
  (plist-get (jsonrpc-request qa-server :qodeassist/status (make-hash-table)) :completion))

(qa-run
 (lambda ()
   (qa-step "load the snippet")
   (require 'eglot)
   (load (qa-param :snippet) nil t)
   (let ((entry (car eglot-server-programs)))
     (qa-record :modes (vconcat (mapcar #'symbol-name (ensure-list (car entry)))))
     (qa-record :class (symbol-name (cadr entry)))
     (qa-record :command (vconcat (cl-loop for x in (cddr entry) while (stringp x) collect x)))
     (qa-record :initializationOptions (cadr (memq :initializationOptions entry))))
   (qa-record :emacs emacs-version)
   (setq eglot-sync-connect 30
         eglot-autoshutdown nil
         eglot-confirm-server-edits nil)

   (qa-step "start eglot on a Python file")
   (with-current-buffer (qa-visit "add.py" (qa-param :completionText))
     (apply #'eglot (eglot--guess-contact))
     (setq qa-server (qa-wait #'eglot-current-server 30 "Eglot to connect"))
     (qa-record :serverClass (symbol-name (eieio-object-class-name qa-server)))
     (qa-record :capabilities
                (list :completionProvider (and (eglot-server-capable :completionProvider) t)
                      :codeActionProvider (and (eglot-server-capable :codeActionProvider) t)
                      :codeActionResolve
                      (and (eglot-server-capable :codeActionProvider :resolveProvider) t)))

     (qa-step "completion-at-point at the end of a line")
     (apply #'qa-goto (qa-param :completionAt))
     (let ((accepted (qa-eglot-completion)))
       (qa-record :candidate (car accepted))
       (qa-record :item (cdr accepted)))
     (qa-record :completedLine (qa-line-text (car (qa-param :completionAt))))

     (qa-step "completion-at-point inside a word")
     (apply #'qa-goto (qa-param :midWordAt))
     (let* ((capf (eglot-completion-at-point))
            (prefix (buffer-substring-no-properties (nth 0 capf) (point)))
            (found nil))
       (qa-record :midWordPrefix prefix)
       (dotimes (_ 10)
         (unless found
           (setq capf (eglot-completion-at-point))
           (setq found (all-completions prefix (nth 2 capf)))
           (accept-process-output nil 0.1)))
       (qa-record :midWordCandidates (vconcat (mapcar #'substring-no-properties found)))
       ;; What the server answered there (the items Eglot filtered by the word "ad").
       (qa-record :midWordItems (plist-get (jsonrpc-request qa-server :textDocument/completion
                                                            (eglot--CompletionParams))
                                           :items))))

   (qa-step "list the refactor code actions of a region")
   (with-current-buffer (qa-visit "total.py" (qa-param :refactorText))
     (qa-wait #'eglot-current-server 10 "the second buffer to join the server")
     (let ((beg (progn (apply #'qa-goto (qa-param :selectionStart)) (point)))
           (end (progn (apply #'qa-goto (qa-param :selectionEnd)) (point))))
       (qa-record :actionTitles
                  (vconcat (mapcar (lambda (a) (plist-get a :title))
                                   (eglot-code-actions beg end "refactor.rewrite"))))

       (qa-step "pick \"QodeAssist: Improve\" with qodeassist-eglot-refactor")
       (let ((completing-read-function
              (lambda (_prompt collection &rest _)
                (qa-check (assoc "QodeAssist: Improve" collection)
                          "no Improve action offered: %S" (mapcar #'car collection))
                "QodeAssist: Improve"))
             (last-nonmenu-event ?\r))     ; a keyboard invocation, as from C-c q r
         (qodeassist-eglot-refactor beg end))
       (qa-record :afterImprove (buffer-substring-no-properties (point-min) (point-max))))

     (qa-step "qodeassist-eglot-refactor-with-instruction")
     (let ((before (buffer-substring-no-properties (point-min) (point-max)))
           (beg (progn (qa-goto 1 0) (point)))
           (end (progn (qa-goto 1 0) (line-end-position))))
       (undo-boundary)
       (qodeassist-eglot-refactor-with-instruction beg end (qa-param :instruction))
       (qa-wait (lambda () (not (equal before (buffer-substring-no-properties
                                                (point-min) (point-max)))))
                20 "the instruction's edit to arrive through workspace/applyEdit")
       (qa-record :afterInstruction (buffer-substring-no-properties (point-min) (point-max)))
       (qa-step "undo the instruction's edit in one step")
       ;; The command loop ends every command with an undo boundary; batch Emacs has none.
       (undo-boundary)
       (let ((last-command nil)) (undo))
       ;; Eglot sends didChange from an idle timer, which batch Emacs never runs: send it now,
       ;; before the shutdown unregisters the change tracker.
       (eglot--signal-textDocument/didChange)
       (qa-record :afterUndo (buffer-substring-no-properties (point-min) (point-max)))))

   (qa-step "chat")
   (with-current-buffer "add.py"
     (qodeassist-eglot-chat (qa-param :chatMessage))
     (qa-wait (lambda ()
                (with-current-buffer qodeassist-eglot-chat-buffer
                  (string-match-p "\\[\\(finished\\|failed\\)" (buffer-string))))
              20 "the chat answer to finish")
     (qa-record :chatBuffer (with-current-buffer qodeassist-eglot-chat-buffer
                              (buffer-substring-no-properties (point-min) (point-max))))

     (qa-step "a second message while the chat answers is refused; C-c q k stops the answer")
     (qodeassist-eglot-chat (qa-param :slowMessage))
     (qa-wait (lambda ()
                (with-current-buffer qodeassist-eglot-chat-buffer
                  (string-match-p (regexp-quote (qa-param :slowText)) (buffer-string))))
              20 "the slow answer's first text")
     (qa-record :sentWhileBusy
                (condition-case err
                    (progn (qodeassist-eglot-chat (qa-param :earlyMessage)) "sent")
                  (user-error (error-message-string err))))
     (funcall (lookup-key qodeassist-eglot-command-map (kbd "k")))
     (qa-wait (lambda ()
                (with-current-buffer qodeassist-eglot-chat-buffer
                  (string-match-p "\\[cancelled\\]" (buffer-string))))
              20 "the answer to be cancelled")
     (qa-record :chatAfterCancel (with-current-buffer qodeassist-eglot-chat-buffer
                                   (buffer-substring-no-properties (point-min) (point-max))))

     (qa-step "status")
     (qa-record :statusNotified (and qodeassist-eglot-status t))
     (qa-record :status (qodeassist-eglot-status))
     (qa-record :lighter (qodeassist-eglot--lighter))

     (qa-step "tell the server where point rests (what the idle timer runs)")
     (qa-record :cursorTimer (and (memq qodeassist-eglot--cursor-timer timer-idle-list) t))
     (apply #'qa-goto (qa-param :caretAt))
     (let ((before (plist-get (qa-completion-status) :warmUps)))
       (qa-record :toldFirst (qodeassist-eglot--tell-cursor))
       (qa-record :toldAgain (qodeassist-eglot--tell-cursor))
       ;; Idle cache warming sends the request at the caret once the user is idle: wait until
       ;; it was sent and answered (the model has seen it), however long a busy machine takes.
       (qa-wait (lambda ()
                  (let ((completion (qa-completion-status)))
                    (and (> (plist-get completion :warmUps) before)
                         (zerop (plist-get completion :inFlight)))))
                30 "the warm-up at the caret to reach the model")))

   (qa-step "shut down")
   (qa-eglot-shutdown qa-server)))

;;; eglot_scenario.el ends here
