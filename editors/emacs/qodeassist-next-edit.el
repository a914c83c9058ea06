;;; qodeassist-next-edit.el --- Next-edit suggestions of qodeassist-lsp in Eglot buffers -*- lexical-binding: t -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; After an edit pause, `qodeassist-next-edit-mode' asks the server for the next edit
;; (`textDocument/copilotInlineEdit', as Copilot's language server serves it) and shows it as
;; an overlay: the text it replaces in `qodeassist-next-edit-replaced' and the lines as they
;; read after the edit below them in `qodeassist-next-edit-added'.  Typing hides it.
;;
;;   M-x qodeassist-next-edit-mode       follow the buffer (an Eglot buffer of qodeassist-lsp)
;;   M-x qodeassist-next-edit-accept     apply the shown edit (one undo step) and report it
;;   M-x qodeassist-next-edit-jump       move point to it
;;   M-x qodeassist-next-edit-dismiss    hide it
;;
;; `qodeassist-next-edit-mode-map' binds C-c C-a (accept), C-c C-j (jump) and C-c C-k
;; (dismiss).  Requires Eglot (Emacs 29+).

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'jsonrpc)

(defgroup qodeassist-next-edit nil
  "Next-edit suggestions of qodeassist-lsp."
  :group 'tools)

(defcustom qodeassist-next-edit-delay 0.5
  "Seconds after the last change before the next edit is asked for."
  :type 'number)

(defface qodeassist-next-edit-replaced '((t :inherit diff-removed))
  "Face of the text a next edit replaces.")

(defface qodeassist-next-edit-added '((t :inherit diff-added))
  "Face of the lines as they read after a next edit.")

(defvar-local qodeassist-next-edit--timer nil)
(defvar-local qodeassist-next-edit--overlay nil
  "The overlay on the text the shown edit replaces.")
(defvar-local qodeassist-next-edit--preview nil
  "The overlay at the end of the edit's last line showing the lines after it.")
(defvar-local qodeassist-next-edit--edit nil
  "The shown edit: a plist (:beg :end :text :command).")
(defvar-local qodeassist-next-edit--request 0
  "Counter of requests: an answer to an older one is ignored.")

(defun qodeassist-next-edit-dismiss ()
  "Hide the shown next edit."
  (interactive)
  (dolist (overlay (list qodeassist-next-edit--overlay qodeassist-next-edit--preview))
    (when (overlayp overlay)
      (delete-overlay overlay)))
  (setq qodeassist-next-edit--overlay nil
        qodeassist-next-edit--preview nil
        qodeassist-next-edit--edit nil))

(defun qodeassist-next-edit--lines-after (beg end text)
  "The lines from BEG's line to END's line once TEXT replaces BEG..END."
  (save-excursion
    (concat (buffer-substring-no-properties (progn (goto-char beg) (line-beginning-position)) beg)
            text
            (buffer-substring-no-properties end (progn (goto-char end) (line-end-position))))))

(defun qodeassist-next-edit--show (edit)
  "Show EDIT (one edit of a `textDocument/copilotInlineEdit' answer)."
  (qodeassist-next-edit-dismiss)
  (let* ((range (plist-get edit :range))
         (beg (eglot--lsp-position-to-point (plist-get range :start)))
         (end (eglot--lsp-position-to-point (plist-get range :end)))
         (text (plist-get edit :text))
         (after (qodeassist-next-edit--lines-after beg end text))
         (overlay (make-overlay beg end nil t nil))
         (eol (save-excursion (goto-char end) (line-end-position)))
         (preview (make-overlay eol eol nil t nil)))
    (overlay-put overlay 'face 'qodeassist-next-edit-replaced)
    (overlay-put preview 'after-string
                 (concat "\n" (propertize after 'face 'qodeassist-next-edit-added)))
    (setq qodeassist-next-edit--preview preview)
    (setq qodeassist-next-edit--overlay overlay
          qodeassist-next-edit--edit (list :beg beg :end end :text text
                                           :command (plist-get edit :command)))
    (jsonrpc-notify (eglot--current-server-or-lose) :textDocument/didShowInlineEdit
                    (list :item edit))))

(defun qodeassist-next-edit-request ()
  "Ask the server for the next edit at point now."
  (interactive)
  (let ((server (eglot-current-server))
        (buffer (current-buffer))
        (number (cl-incf qodeassist-next-edit--request)))
    (when server
      ;; Eglot sends buffer changes lazily: flush them so the server sees this very text.
      (eglot--signal-textDocument/didChange)
      (let ((version eglot--versioned-identifier))
        (jsonrpc-async-request
         server :textDocument/copilotInlineEdit
         (list :textDocument (list :uri (plist-get (eglot--TextDocumentIdentifier) :uri)
                                   :version version)
               :position (eglot--pos-to-lsp-position)
               :context (list :triggerKind 2))
         :success-fn
         (lambda (result)
           (when (buffer-live-p buffer)
             (with-current-buffer buffer
               (let ((edit (and (> (length (plist-get result :edits)) 0)
                                (aref (plist-get result :edits) 0))))
                 (when (and edit
                            (= number qodeassist-next-edit--request)
                            (equal version eglot--versioned-identifier)
                            (equal version (plist-get (plist-get edit :textDocument) :version)))
                   (qodeassist-next-edit--show edit))))))
         :error-fn #'ignore
         :timeout 60)))))

(defun qodeassist-next-edit-jump ()
  "Move point to the shown next edit."
  (interactive)
  (if qodeassist-next-edit--edit
      (goto-char (plist-get qodeassist-next-edit--edit :beg))
    (user-error "No next edit is shown")))

(defun qodeassist-next-edit-accept ()
  "Apply the shown next edit and report it to the server."
  (interactive)
  (let ((edit qodeassist-next-edit--edit)
        (server (eglot-current-server)))
    (unless edit
      (user-error "No next edit is shown"))
    (qodeassist-next-edit-dismiss)
    (save-excursion
      (goto-char (plist-get edit :beg))
      (delete-region (plist-get edit :beg) (plist-get edit :end))
      (insert (plist-get edit :text)))
    (let ((command (plist-get edit :command)))
      (when (and server command)
        (jsonrpc-async-request server :workspace/executeCommand
                               (list :command (plist-get command :command)
                                     :arguments (plist-get command :arguments))
                               :success-fn #'ignore :error-fn #'ignore)))))

(defun qodeassist-next-edit--changed (&rest _)
  "Hide what is shown and ask again after `qodeassist-next-edit-delay'."
  (qodeassist-next-edit-dismiss)
  (when (timerp qodeassist-next-edit--timer)
    (cancel-timer qodeassist-next-edit--timer))
  (let ((buffer (current-buffer)))
    (setq qodeassist-next-edit--timer
          (run-with-idle-timer
           qodeassist-next-edit-delay nil
           (lambda ()
             (when (buffer-live-p buffer)
               (with-current-buffer buffer
                 (setq qodeassist-next-edit--timer nil)
                 (qodeassist-next-edit-request))))))))

(defun qodeassist-next-edit--focused ()
  "Tell the server this buffer is being looked at (`textDocument/didFocus')."
  (let ((server (eglot-current-server)))
    (when server
      (jsonrpc-notify server :textDocument/didFocus
                      (list :textDocument (list :uri (plist-get (eglot--TextDocumentIdentifier)
                                                                :uri)))))))

(defvar qodeassist-next-edit-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-a") #'qodeassist-next-edit-accept)
    (define-key map (kbd "C-c C-j") #'qodeassist-next-edit-jump)
    (define-key map (kbd "C-c C-k") #'qodeassist-next-edit-dismiss)
    map)
  "Keys of `qodeassist-next-edit-mode'.")

;;;###autoload
(define-minor-mode qodeassist-next-edit-mode
  "Show qodeassist-lsp's next-edit suggestions in this Eglot buffer."
  :lighter " NE"
  :keymap qodeassist-next-edit-mode-map
  (if qodeassist-next-edit-mode
      (progn
        (add-hook 'after-change-functions #'qodeassist-next-edit--changed nil t)
        (qodeassist-next-edit--focused))
    (remove-hook 'after-change-functions #'qodeassist-next-edit--changed t)
    (when (timerp qodeassist-next-edit--timer)
      (cancel-timer qodeassist-next-edit--timer))
    (qodeassist-next-edit-dismiss)))

(provide 'qodeassist-next-edit)
;;; qodeassist-next-edit.el ends here
