print("envctl")
