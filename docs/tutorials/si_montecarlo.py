# %% [markdown]
# # si_montecarlo

# %%
print(1 + 1)
