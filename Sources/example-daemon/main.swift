print("daemon")
